"""The HTTPS + WebSocket API server: routing, authentication and authorisation, admission,
REST verbs, list/watch, discovery, and the exec, log and proxy subresources."""
