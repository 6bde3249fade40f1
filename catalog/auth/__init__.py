"""Who may call the server: its static token and OAuth2 clients (`clients`), the expiring tokens
they are issued (`tokens`), the authenticator and token endpoint (`oauth`, `routes`)."""
