"""Each connector's configuration model and checks: what the API validates a source by."""
