"""The shell around the domain: persistence backends, the store API, the CLI."""
