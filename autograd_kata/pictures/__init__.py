"""Pictures of the engine: the graph, the slope explorer, training curves."""
