"""The fault monitor: detect a failed host, fence it, recover its servers."""
