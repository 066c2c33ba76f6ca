"""Chat attachments: upload, download, linking to a message, rendering for an agent."""
