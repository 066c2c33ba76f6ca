from enum import StrEnum


class SecretKind(StrEnum):
    API_KEY = "api_key"
    AWS_CREDENTIALS = "aws_credentials"
    AZURE_STORAGE = "azure_storage"
    CONFLUENCE_TOKEN = "confluence_token"
    GCP_SERVICE_ACCOUNT = "gcp_service_account"
    GIT_TOKEN = "git_token"
    LLAMAPARSE = "llamaparse"
    MS_GRAPH_APP = "ms_graph_app"

    def __str__(self) -> str:
        return str(self.value)
