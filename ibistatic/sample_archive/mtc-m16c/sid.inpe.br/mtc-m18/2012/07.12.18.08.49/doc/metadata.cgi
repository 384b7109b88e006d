#!/bin/sh
# metadata.cgi of sid.inpe.br/mtc-m18/2012/07.12.18.08.49
# Metadata of sid.inpe.br/mtc-m18/2012/07.12.18.08 (8JMKD3MGP8W/3C9EP6P): "Reference Model for an Open Archival Information System (OAIS)".
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
<head><meta charset="utf-8"><title>Metadata: Reference Model for an Open Archival Information System (OAIS)</title></head>
<body>
<h1>Reference Model for an Open Archival Information System (OAIS)</h1>
<dl>
<dt>Reference</dt><dd>CCSDS 650.0-M-2, Magenta Book, Issue 2</dd>
<dt>Author</dt><dd>Consultative Committee for Space Data Systems</dd>
<dt>Date</dt><dd>June 2012</dd>
<dt>Previous edition</dt><dd>CCSDS 650.0-B-1 (http://urlib.net/8JMKD3MGP8W/35MMLL8)</dd>
<dt>Persistent link</dt><dd>http://urlib.net/8JMKD3MGP8W/3C9EP6P</dd>
</dl>
</body>
</html>
EOF
    ;;
esac
