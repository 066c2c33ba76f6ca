"""Sync sources in the public API: connectors, sources per knowledge base, runs, logs.

``router.build_sync_router`` is registered by ``docproc_upload.app``;
``repository.deactivate_sources_for_kb`` is called by the knowledge-base delete path.
"""
