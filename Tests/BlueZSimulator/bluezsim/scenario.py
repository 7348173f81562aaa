"""Scenario files (stub)."""
def load_scenario(path):
    return None
