"""The vault's API under ``/api/v1/secrets``: create, list (metadata only), delete."""
