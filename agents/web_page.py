"""The page of ``jamb-web`` (agents/web.py): one HTML document with inline CSS and
JavaScript that talks JSON to the server's API; nothing is fetched from elsewhere."""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Jamb</title></head>
<body><p>The page is not here yet: use the JSON API (/api/config).</p></body></html>
"""
