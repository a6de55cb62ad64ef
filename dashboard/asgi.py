"""The dashboard as an ASGI application: benchmarks/serving.py's uvicorn candidates. `make serve`
runs dashboard.wsgi under gunicorn (docs/server.md says why); under ASGI, Django takes the URL
prefix off a path itself, but only one that still carries it."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
application = get_asgi_application()
