#!/bin/sh
# metadata.cgi of sid.inpe.br/mtc-m18@80/2009/07.21.13.23.47
# Metadata of sid.inpe.br/mtc-m18@80/2009/07.21.13.23 (8JMKD3MGP8W/35MME4E): "ASCII Encoded English (CCSD0002)".
# Free-format metadata (HTML) by default; ?choice=oai_dc answers the OAI Dublin Core
# record kept beside this script in oai_dc.xml.
here=$(dirname "$0")
case "$QUERY_STRING" in
  *choice=oai_dc*)
    printf 'Content-Type: text/xml; charset=UTF-8\r\n\r\n'
    cat "$here/oai_dc.xml"
    ;;
  *)
    printf 'Content-Type: text/html; charset=UTF-8\r\n\r\n'
    cat <<'EOF'
<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Metadata: ASCII Encoded English (CCSD0002)</title></head>
<body>
<h1>ASCII Encoded English (CCSD0002)</h1>
<dl>
<dt>Reference</dt><dd>CCSDS 643.0-B-1, Blue Book, Issue 1</dd>
<dt>Author</dt><dd>Consultative Committee for Space Data Systems</dd>
<dt>Date</dt><dd>November 1992</dd>
<dt>Language</dt><dd>English (Portuguese translation: RTC-07)</dd>
<dt>Persistent link</dt><dd>http://urlib.net/8JMKD3MGP8W/35MME4E</dd>
</dl>
</body>
</html>
EOF
    ;;
esac
