"""The runtime: execution state, the scheduler, back ends and the model of every primitive."""
