"""The checks of issue 5 that join the spec, the harness and the reference (docs/conformance.md).

* ``impl_to_spec`` -- every execution the harness explores emits a trace the spec allows;
* ``spec_to_impl`` -- the spec's observable traces against the reference's, with coverage;
* ``real_threads`` -- stress runs under plain ``threading``, every trace validated;
* ``mbt`` -- a Hypothesis state machine driving the reference step by step against the spec;
* ``three_places`` -- one counterexample: spec mutant, harness schedule, validator verdict.
"""
