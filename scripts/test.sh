#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine, checks the code's format and
# lint (ruff), then runs the whole suite.
# Python packages come from PyPI; chromium, nginx, Apache, wrk and node.js from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
[ -x /usr/sbin/apache2 ] || need+=(apache2)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)  # the Nu HTML Checker (vnu)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian packages: ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    echo "warning: cannot install ${need[*]} (not root or no apt-get)" >&2
  fi
fi

# npm packages the tests run (host engines, page checkers) go into .node/ (git-ignored),
# pinned; installed only when missing. Add one line per package.
NPM_PACKAGES=(
  @netlify/redirects@3.1.15  # Netlify's redirect engine (tests/test_host_netlify.py)
  wrangler@4.86.0            # Cloudflare Pages' workerd (test_host_cloudflare.py); the last for node 20
  axe-core@4.14.1            # the accessibility rules (test_catalog_axe.py, test_page_checkers.py)
  puppeteer-core@25.16.0     # drives Chromium for axe on the site's pages
  vnu-jar@26.9.27            # the Nu HTML checker (needs a Java runtime)
)
if [ ${#NPM_PACKAGES[@]} -gt 0 ] && command -v npm >/dev/null 2>&1; then
  missing=()
  for package in "${NPM_PACKAGES[@]}"; do
    name="${package%@*}"
    [ -e ".node/node_modules/$name/package.json" ] || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing npm packages into .node/: ${missing[*]}"
    # all of them at once: an install with --no-save prunes the packages it was not given
    npm install --prefix .node --no-save --no-audit --no-fund --loglevel=error "${NPM_PACKAGES[@]}" >/dev/null
  fi
fi

# Style first: a file ruff would reformat, or a lint error, fails the script before pytest runs.
python3 -m ruff format --check .
python3 -m ruff check .

python3 -m pytest -q "$@"
