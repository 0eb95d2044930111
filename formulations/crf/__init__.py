"""The elastic-net linear-chain CRF: Wapiti-like templates and the criterion (numpy / scipy)."""
