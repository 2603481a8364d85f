# Sphinx configuration for the nova-forcedown documentation.
#
# The configuration and policy references and their samples are generated
# from the code at build time (oslo.config and oslo.policy Sphinx
# extensions), using the same generator files as "tox -e genconfig" and
# "tox -e genpolicy", so the documentation cannot drift from the defaults.
# The architecture page's route map, layer table and request paths come
# from the code too (_ext/architecture_map.py).

import os
import sys

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
_ETC = os.path.join(_ROOT, 'etc', 'nova_forcedown')

# The project's own extension, and the checkout, whose tests/unit/
# test_layers.py holds the layer rules the architecture page shows.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), '_ext'))
sys.path.insert(0, _ROOT)

project = 'nova-forcedown'
copyright = 'nova-forcedown developers'
author = 'nova-forcedown developers'

extensions = [
    'oslo_config.sphinxext',
    'oslo_config.sphinxconfiggen',
    'oslo_policy.sphinxext',
    'oslo_policy.sphinxpolicygen',
    'os_api_ref',
    'openstackdocstheme',
    'architecture_map',
]

# openstackdocstheme, the theme of every OpenStack project; os-api-ref's
# microversion selector and expand buttons need the jQuery and Bootstrap
# it brings. The project is not hosted on opendev.org: no repository
# name, so no "edit on opendev" or bug links to a project that is not
# there; the version is the package's own, not a series.
openstackdocs_repo_name = ''
openstackdocs_auto_name = False
openstackdocs_auto_version = False
openstackdocs_pdf_link = False

# os-api-ref: the API reference (doc/source/api) is written with its
# rest_method / rest_parameters / rest_status_code directives. The
# microversion selector offers the range the API serves.
os_api_ref_min_microversion = '2.1'
os_api_ref_max_microversion = '2.104'

config_generator_config_file = os.path.join(
    _ETC, 'nova_forcedown-config-generator.conf')
sample_config_basename = '_static/nova_forcedown'

policy_generator_config_file = os.path.join(
    _ETC, 'nova_forcedown-policy-generator.conf')
sample_policy_basename = '_static/nova_forcedown'

master_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = ['_build']

html_theme = 'openstackdocs'
templates_path = ['_templates']
html_static_path = ['_static']
html_css_files = ['nova_forcedown.css']
html_title = 'nova-forcedown'
html_theme_options = {
    # No Google Analytics and no OpenStack badge: these pages are read
    # from a checkout or an operator's own site. _templates/ replaces the
    # theme's links to the OpenStack Foundation's sites.
    'analytics_tracking_code': '',
    'display_badge': False,
    'root_title': 'nova-forcedown',
}
