# Sphinx configuration for the nova-forcedown release notes (reno).

project = 'nova-forcedown Release Notes'
copyright = 'nova-forcedown developers'
author = 'nova-forcedown developers'

extensions = ['reno.sphinxext']

master_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = ['_build']
pygments_style = 'sphinx'

html_theme = 'alabaster'
html_static_path = []
