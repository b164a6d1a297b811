"""`lanecheck serve`: a live state explorer of a design's spec, in the manner of Stateright's.

A page shows one state of a spec (or of one of its mutants) at one configuration, reached by a
path from an initial state; the path is in the URL, so a page can be shared and reopened. Every
successor is computed live from the spec through the registry, so a design needs no code here.

* ``subject``  — names in a URL (design, configuration, mutant) -> the spec bound to constants;
* ``walk``     — a path in a URL -> the states along it, or an error naming the bad step;
* ``shortest`` — the explorer's shortest counterexample of a mutant, as a path;
* ``pages``    — the HTML (no script, no asset fetched from elsewhere);
* ``app``      — the ASGI app (Starlette); ``server`` — binding a port and running it (uvicorn).
"""
