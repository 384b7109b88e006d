#!/bin/sh
# metadata.cgi of sid.inpe.br/mtc-m19/2013/09.04.12.27.58 (Example 7.10 prints its URL).
# Metadados de sid.inpe.br/mtc-m19/2013/09.04.12.27.57 (8JMKD3MGP7W/3EPGUE5).
# Free-format metadata (HTML); the OAI Dublin Core record is the static oai_dc.xml beside it.
printf 'Content-Type: text/html; charset=UTF-8\r\n\r\n'
cat <<'HTML'
<!DOCTYPE html>
<html lang="pt">
<head>
<meta charset="utf-8">
<title>Metadados: Sistema para resolução de IBI: relatório final</title>
</head>
<body>
<h1>Metadados: Sistema para resolução de IBI: relatório final</h1>
<table>
<tr><th>Título</th><td>Sistema para resolução de IBI: relatório final</td></tr>
<tr><th>Autor</th><td>Banon, Gerald Jean Francis</td></tr>
<tr><th>Data</th><td>2013-09-04</td></tr>
<tr><th>Idioma</th><td>Português (Brasil)</td></tr>
<tr><th>Editora</th><td>INPE</td></tr>
<tr><th>Link persistente</th><td>http://urlib.net/8JMKD3MGP7W/3EPGUE5</td></tr>
</table>
</body>
</html>
HTML
