"""The compute agent: registers its hosts and heartbeats them."""
