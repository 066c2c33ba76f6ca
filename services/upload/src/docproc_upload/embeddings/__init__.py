"""A collection's embeddings: the catalog, registered keyless endpoints, choosing, moving."""
