"""Providers: one protocol, one registry; local and scripted built in."""
