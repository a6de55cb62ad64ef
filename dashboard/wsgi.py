"""The dashboard as a WSGI application: gunicorn's in `make serve`, runserver's in `make run`.

Under DASHBOARD_URL_PREFIX ("/desk") a proxy may pass the path as the browser sent it
(/desk/facts/) or with the prefix taken off (/facts/). Django adds FORCE_SCRIPT_NAME to every URL
it makes but, under WSGI, takes nothing off a path it is given, so the prefix comes off here.
"""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dashboard.settings")
django_application = get_wsgi_application()


def application(environ, start_response):
    prefix, path = settings.URL_PREFIX, environ.get("PATH_INFO", "")
    if prefix and (path == prefix or path.startswith(prefix + "/")):
        environ["PATH_INFO"] = path[len(prefix):] or "/"
    return django_application(environ, start_response)
