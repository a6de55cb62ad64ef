"""Dashboard settings: every value from the environment (or local.env, which `make run` writes).

MEMORY_URL and MEMORY_SECRET point the dashboard at any memory service of the contract;
MEMORY_NAMES lists the memories it serves there (dashboard/memory.py).
"""

from pathlib import Path

import environ
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
ENV_FILE = Path(env.str("DASHBOARD_ENV_FILE", default=str(BASE_DIR / "local.env")))
if ENV_FILE.exists():
    env.read_env(ENV_FILE, overwrite=False)

SECRET_KEY = env.str("SECRET_KEY")  # no default: a missing key must fail loudly
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

MEMORY_URL = env.str("MEMORY_URL", default="http://127.0.0.1:8787")
MEMORY_SECRET = env.str("MEMORY_SECRET")
# The owner's memories by name, the first at the dashboard's root, each other at /m/NAME/. A
# Worker cannot list its Durable Objects, so this list is the switcher's; a `serve --dir`
# service adds the memories it holds. Empty: the memory MEMORY_URL names, else "default".
MEMORY_NAMES = env.list("MEMORY_NAMES", default=[])
MEMORY_TIMEOUT = env.float("MEMORY_TIMEOUT", default=10.0)
DUPLICATE_THRESHOLD = env.float("DUPLICATE_THRESHOLD", default=0.97)

# Uploads (the Import page, dashboard/import_jobs.py). Django keeps an upload up to
# FILE_UPLOAD_MAX_MEMORY_SIZE in memory and streams a bigger one to a temporary file; the import
# refuses a file over IMPORT_MAX_FILE_BYTES from its size, before reading it (never past the
# readers' own 20 MB). A form's other fields may take DATA_UPLOAD_MAX_MEMORY_SIZE. All uploads
# being imported hold at most IMPORT_HELD_BYTES together, as the jobs estimate it.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440  # 2.5 MB, Django's default, said here
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
IMPORT_MAX_FILE_BYTES = env.int("IMPORT_MAX_FILE_BYTES", default=20 * 1024 * 1024)
IMPORT_HELD_BYTES = env.int("IMPORT_HELD_BYTES", default=512 * 1024 * 1024)

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "dashboard",
]

MIDDLEWARE = [
    "dashboard.proxy.ForwardedForMiddleware",  # first: the client's address, for everything after it
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "dashboard.middleware.NoStoreMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "dashboard.middleware.MemoryErrorMiddleware",
    "dashboard.middleware.MemoryNameMiddleware",  # inside the deadline: it may ask the service for its memories
    "dashboard.roles.RoleMiddleware",  # a viewer's write refused before any view runs
]

REQUEST_LOG = env.bool("REQUEST_LOG", default=False)  # `make serve` sets it: one line a request (request_log.py)
if REQUEST_LOG:
    MIDDLEWARE.insert(0, "dashboard.request_log.RequestLogMiddleware")

ROOT_URLCONF = "dashboard.urls"
WSGI_APPLICATION = "dashboard.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dashboard.context_processors.memory_status",
                "dashboard.context_processors.role",
            ],
        },
    },
]

DASHBOARD_DB = Path(env.str("DASHBOARD_DB", default=str(BASE_DIR / "var" / "dashboard.db")))
if "DASHBOARD_DATABASE_URL" not in env:  # SQLite creates the file, not its folder: a fresh clone has no var/
    DASHBOARD_DB.parent.mkdir(parents=True, exist_ok=True)
DATABASES = {"default": env.db("DASHBOARD_DATABASE_URL", default=f"sqlite:///{DASHBOARD_DB}")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "facts"
LOGOUT_REDIRECT_URL = "login"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# Security: the owner's memory is private.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
    "base-uri": [CSP.NONE],
    "object-src": [CSP.NONE],
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
# Secure cookies need HTTPS; `make run` serves plain HTTP on loopback, a deployment sets these on.
SESSION_COOKIE_SECURE = env.bool("SECURE_COOKIES", default=False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# Behind a reverse proxy that ends HTTPS (docs/server.md). The proxy names the scheme the browser
# used in a header (X-Forwarded-Proto): without it Django sees plain HTTP, so the SSL redirect
# would loop and the CSRF check would take an https Origin for another site.
if PROXY_SSL_HEADER := env.str("SECURE_PROXY_SSL_HEADER", default=""):
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + PROXY_SSL_HEADER.upper().replace("-", "_"), "https")
# The proxies whose X-Forwarded-For names the client (dashboard/proxy.py); gunicorn believes their
# X-Forwarded-Proto. None unless set: `make serve` sets loopback, where its proxy runs.
FORWARDED_ALLOW_IPS = env.list("FORWARDED_ALLOW_IPS", default=[])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])  # only where the proxy rewrites Host
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SECURE_REDIRECT_EXEMPT = [r"(^|/)healthz$"]  # a monitor on loopback asks over plain HTTP (the path has the prefix)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)

LANGUAGE_CODE = "en-gb"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = False
USE_TZ = True

# The whole desk under a path of a site ("/desk"): every reverse(), redirect, login URL and static
# URL takes it. A proxy may pass paths with the prefix (dashboard/wsgi.py takes it off) or without
# it. The cookies stay under it, away from the site's other apps.
URL_PREFIX = env.str("DASHBOARD_URL_PREFIX", default="").strip("/")
URL_PREFIX = f"/{URL_PREFIX}" if URL_PREFIX else ""
FORCE_SCRIPT_NAME = URL_PREFIX or None
SESSION_COOKIE_PATH = CSRF_COOKIE_PATH = f"{URL_PREFIX}/"

STATIC_URL = f"{URL_PREFIX}/static/"  # absolute: a relative one would take a memory's /m/NAME/ prefix
STATICFILES_DIRS = [BASE_DIR / "static"]
# `make serve` collects static/ into STATIC_ROOT, each file under a name with its hash and beside
# it compressed, so browsers keep them for ever; without it (`make run`, the tests) WhiteNoise
# serves static/ straight from the repo, no collectstatic step.
STATIC_ROOT = env.str("STATIC_ROOT", default="") or None
if STATIC_ROOT:
    STORAGES = {"default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
                "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}}
else:
    WHITENOISE_USE_FINDERS = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"request": {"format": "%(asctime)s %(message)s", "datefmt": "%Y-%m-%d %H:%M:%S"}},
    "handlers": {"console": {"class": "logging.StreamHandler"},
                 "requests": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout", "formatter": "request"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"},
                "dashboard.requests": {"handlers": ["requests"], "level": "INFO", "propagate": False}},
}
