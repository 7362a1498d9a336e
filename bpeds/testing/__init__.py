"""The property-testing kit: reference models, strategies and state machines."""
