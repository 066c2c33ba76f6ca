"""The MCP server at ``/mcp`` (docs/mcp.md): docproc's knowledge bases as an agent's tools.

Each tool is a thin call of the service functions the matching route calls, with the
caller the route would have (the same bearer token, ``docproc_upload.bearer``), so the
reach table, the refusals and the audit are the routes' own; a refusal comes back as a
tool error carrying the error envelope's message (and the envelope under its ``_meta``).
"""
