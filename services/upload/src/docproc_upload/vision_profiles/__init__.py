"""``/api/v1/vision-profiles``: an organization's vision model profiles (#image-description)."""
