"""Reranking: a stage after a search's ranking (docs/search.md, "Reranking")."""
