"""``judgekit serve``: the store as a service for a team of annotators and for CI.

``app.py`` builds the ASGI application (FastAPI): ``api.py`` the JSON API under
``/api/v1/``, ``auth.py`` tokens and roles, ``webapp.py`` the annotate app in a
browser (textual-serve's terminal bridge, one app process per session), and
``progress.py`` the per-annotator queue progress that the CLI's ``queues`` also prints.
FastAPI, uvicorn and textual-serve come with the ``serve`` extra.
"""
