"""Contains all the data models used in inputs/outputs"""

from .agent_in import AgentIn
from .attach_out import AttachOut
from .attach_request import AttachRequest
from .binary_part_out import BinaryPartOut
from .chat_file_info import ChatFileInfo
from .chat_file_info_file_type import ChatFileInfoFileType
from .chat_file_out import ChatFileOut
from .chat_file_out_file_type import ChatFileOutFileType
from .chunk import Chunk
from .chunk_context import ChunkContext
from .chunking_strategy import ChunkingStrategy
from .clone_request import CloneRequest
from .collection_create import CollectionCreate
from .collection_create_scope_type_0 import CollectionCreateScopeType0
from .collection_create_vector_type_type_0 import CollectionCreateVectorTypeType0
from .collection_deleted_out import CollectionDeletedOut
from .collection_info import CollectionInfo
from .collection_info_indexing_status import CollectionInfoIndexingStatus
from .collection_info_vector_index import CollectionInfoVectorIndex
from .connector_out import ConnectorOut
from .connector_out_config_schema import ConnectorOutConfigSchema
from .document_out import DocumentOut
from .document_page import DocumentPage
from .embedding_catalog_out import EmbeddingCatalogOut
from .embedding_endpoint_create import EmbeddingEndpointCreate
from .embedding_endpoint_create_scope import EmbeddingEndpointCreateScope
from .embedding_endpoint_out import EmbeddingEndpointOut
from .embedding_model_out import EmbeddingModelOut
from .embedding_provider_out import EmbeddingProviderOut
from .embedding_provider_out_credential import EmbeddingProviderOutCredential
from .error_body import ErrorBody
from .error_details import ErrorDetails
from .error_envelope import ErrorEnvelope
from .evaluation_create import EvaluationCreate
from .evaluation_detail import EvaluationDetail
from .evaluation_out import EvaluationOut
from .evaluation_query import EvaluationQuery
from .evaluation_query_relevant import EvaluationQueryRelevant
from .evaluation_run_out import EvaluationRunOut
from .evaluation_run_out_scores import EvaluationRunOutScores
from .evaluation_run_out_skipped import EvaluationRunOutSkipped
from .evaluation_run_out_status import EvaluationRunOutStatus
from .evaluation_run_out_trigger import EvaluationRunOutTrigger
from .field_problem import FieldProblem
from .file_type import FileType
from .filter_values import FilterValues
from .get_supported_formats_parser_type_0 import GetSupportedFormatsParserType0
from .grant_in import GrantIn
from .grant_in_permission import GrantInPermission
from .history_file_out import HistoryFileOut
from .history_file_out_file_type import HistoryFileOutFileType
from .ingest_into_collection_body import IngestIntoCollectionBody
from .ingestion_config import IngestionConfig
from .ingestion_config_liteparse_output_format import (
    IngestionConfigLiteparseOutputFormat,
)
from .ingestion_config_parser import IngestionConfigParser
from .ingestion_status import IngestionStatus
from .ingestion_status_indexing_status import IngestionStatusIndexingStatus
from .ingestion_status_vector_index import IngestionStatusVectorIndex
from .knowledge_base_create import KnowledgeBaseCreate
from .knowledge_base_create_scope_type_0 import KnowledgeBaseCreateScopeType0
from .knowledge_base_create_vector_type_type_0 import KnowledgeBaseCreateVectorTypeType0
from .knowledge_base_out import KnowledgeBaseOut
from .knowledge_base_out_ingestion_config import KnowledgeBaseOutIngestionConfig
from .knowledge_base_patch import KnowledgeBasePatch
from .knowledge_base_patch_ingestion_config import KnowledgeBasePatchIngestionConfig
from .local_sync_request import LocalSyncRequest
from .local_sync_request_sync_mode import LocalSyncRequestSyncMode
from .message_attachments_out import MessageAttachmentsOut
from .mode_scores import ModeScores
from .parsed_document import ParsedDocument
from .parsed_page import ParsedPage
from .parsed_pages import ParsedPages
from .parser_formats import ParserFormats
from .parser_formats_unavailable import ParserFormatsUnavailable
from .rag_ingest_response import RAGIngestResponse
from .reindex_out import ReindexOut
from .render_out import RenderOut
from .render_request import RenderRequest
from .rendered_file_out import RenderedFileOut
from .rendered_file_out_file_type import RenderedFileOutFileType
from .rerank_setting import RerankSetting
from .run_out import RunOut
from .search_filters_in import SearchFiltersIn
from .search_hit import SearchHit
from .search_hit_links import SearchHitLinks
from .search_hit_metadata import SearchHitMetadata
from .search_request import SearchRequest
from .search_request_mode import SearchRequestMode
from .search_response import SearchResponse
from .secret_create import SecretCreate
from .secret_create_value import SecretCreateValue
from .secret_kind import SecretKind
from .secret_out import SecretOut
from .secret_out_visibility import SecretOutVisibility
from .served_models_out import ServedModelsOut
from .settings_snapshot import SettingsSnapshot
from .settings_snapshot_ingestion_config import SettingsSnapshotIngestionConfig
from .settings_snapshot_rerank_type_0 import SettingsSnapshotRerankType0
from .source_create import SourceCreate
from .source_create_config import SourceCreateConfig
from .source_create_connector import SourceCreateConnector
from .source_create_sync_mode import SourceCreateSyncMode
from .source_out import SourceOut
from .source_out_config import SourceOutConfig
from .source_patch import SourcePatch
from .source_patch_config_type_0 import SourcePatchConfigType0
from .source_patch_sync_mode_type_0 import SourcePatchSyncModeType0
from .stored_query import StoredQuery
from .stored_query_relevant import StoredQueryRelevant
from .supported_formats import SupportedFormats
from .sync_log_out import SyncLogOut
from .sync_log_page import SyncLogPage
from .text_part_out import TextPartOut
from .upload_beir_evaluation_body import UploadBeirEvaluationBody
from .upload_chat_file_body import UploadChatFileBody
from .upload_document_body import UploadDocumentBody
from .visibility import Visibility
from .vision_profile import VisionProfile
from .vision_profile_create import VisionProfileCreate
from .vision_profile_create_provider import VisionProfileCreateProvider
from .vision_profile_out import VisionProfileOut
from .workspace_entry_out import WorkspaceEntryOut
from .workspace_fetch_out import WorkspaceFetchOut
from .workspace_listing_out import WorkspaceListingOut

__all__ = (
    "AgentIn",
    "AttachOut",
    "AttachRequest",
    "BinaryPartOut",
    "ChatFileInfo",
    "ChatFileInfoFileType",
    "ChatFileOut",
    "ChatFileOutFileType",
    "Chunk",
    "ChunkContext",
    "ChunkingStrategy",
    "CloneRequest",
    "CollectionCreate",
    "CollectionCreateScopeType0",
    "CollectionCreateVectorTypeType0",
    "CollectionDeletedOut",
    "CollectionInfo",
    "CollectionInfoIndexingStatus",
    "CollectionInfoVectorIndex",
    "ConnectorOut",
    "ConnectorOutConfigSchema",
    "DocumentOut",
    "DocumentPage",
    "EmbeddingCatalogOut",
    "EmbeddingEndpointCreate",
    "EmbeddingEndpointCreateScope",
    "EmbeddingEndpointOut",
    "EmbeddingModelOut",
    "EmbeddingProviderOut",
    "EmbeddingProviderOutCredential",
    "ErrorBody",
    "ErrorDetails",
    "ErrorEnvelope",
    "EvaluationCreate",
    "EvaluationDetail",
    "EvaluationOut",
    "EvaluationQuery",
    "EvaluationQueryRelevant",
    "EvaluationRunOut",
    "EvaluationRunOutScores",
    "EvaluationRunOutSkipped",
    "EvaluationRunOutStatus",
    "EvaluationRunOutTrigger",
    "FieldProblem",
    "FileType",
    "FilterValues",
    "GetSupportedFormatsParserType0",
    "GrantIn",
    "GrantInPermission",
    "HistoryFileOut",
    "HistoryFileOutFileType",
    "IngestIntoCollectionBody",
    "IngestionConfig",
    "IngestionConfigLiteparseOutputFormat",
    "IngestionConfigParser",
    "IngestionStatus",
    "IngestionStatusIndexingStatus",
    "IngestionStatusVectorIndex",
    "KnowledgeBaseCreate",
    "KnowledgeBaseCreateScopeType0",
    "KnowledgeBaseCreateVectorTypeType0",
    "KnowledgeBaseOut",
    "KnowledgeBaseOutIngestionConfig",
    "KnowledgeBasePatch",
    "KnowledgeBasePatchIngestionConfig",
    "LocalSyncRequest",
    "LocalSyncRequestSyncMode",
    "MessageAttachmentsOut",
    "ModeScores",
    "ParsedDocument",
    "ParsedPage",
    "ParsedPages",
    "ParserFormats",
    "ParserFormatsUnavailable",
    "RAGIngestResponse",
    "ReindexOut",
    "RenderOut",
    "RenderRequest",
    "RenderedFileOut",
    "RenderedFileOutFileType",
    "RerankSetting",
    "RunOut",
    "SearchFiltersIn",
    "SearchHit",
    "SearchHitLinks",
    "SearchHitMetadata",
    "SearchRequest",
    "SearchRequestMode",
    "SearchResponse",
    "SecretCreate",
    "SecretCreateValue",
    "SecretKind",
    "SecretOut",
    "SecretOutVisibility",
    "ServedModelsOut",
    "SettingsSnapshot",
    "SettingsSnapshotIngestionConfig",
    "SettingsSnapshotRerankType0",
    "SourceCreate",
    "SourceCreateConfig",
    "SourceCreateConnector",
    "SourceCreateSyncMode",
    "SourceOut",
    "SourceOutConfig",
    "SourcePatch",
    "SourcePatchConfigType0",
    "SourcePatchSyncModeType0",
    "StoredQuery",
    "StoredQueryRelevant",
    "SupportedFormats",
    "SyncLogOut",
    "SyncLogPage",
    "TextPartOut",
    "UploadBeirEvaluationBody",
    "UploadChatFileBody",
    "UploadDocumentBody",
    "Visibility",
    "VisionProfile",
    "VisionProfileCreate",
    "VisionProfileCreateProvider",
    "VisionProfileOut",
    "WorkspaceEntryOut",
    "WorkspaceFetchOut",
    "WorkspaceListingOut",
)
