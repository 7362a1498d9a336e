"""Scoring strategies for the merge driver."""
