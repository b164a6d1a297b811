"""The explorer on a Ray cluster: the same layer-synchronous search as ``parallel.py``, with Ray
actors in place of forked processes and Ray's object store in place of pipes (docs/scale-out.md).

``session`` connects to Ray (or says how to install it), ``fingerprint`` decides which worker owns
a state with a hash that is the same in every process, ``worker`` is an actor's side of the
search, ``pool`` keeps actors from one check to the next, ``engine`` drives the search.
"""
