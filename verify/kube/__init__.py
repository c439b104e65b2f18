"""The only layer that talks to the API server: connection, credentials, REST, watches, exec."""
