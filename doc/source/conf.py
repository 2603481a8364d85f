# Sphinx configuration for the nova-forcedown documentation.
#
# The configuration and policy references and their samples are generated
# from the code at build time (oslo.config and oslo.policy Sphinx
# extensions), using the same generator files as "tox -e genconfig" and
# "tox -e genpolicy", so the documentation cannot drift from the defaults.

import os

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
_ETC = os.path.join(_ROOT, 'etc', 'nova_forcedown')

project = 'nova-forcedown'
copyright = 'nova-forcedown developers'
author = 'nova-forcedown developers'

extensions = [
    'oslo_config.sphinxext',
    'oslo_config.sphinxconfiggen',
    'oslo_policy.sphinxext',
    'oslo_policy.sphinxpolicygen',
]

config_generator_config_file = os.path.join(
    _ETC, 'nova_forcedown-config-generator.conf')
sample_config_basename = '_static/nova_forcedown'

policy_generator_config_file = os.path.join(
    _ETC, 'nova_forcedown-policy-generator.conf')
sample_policy_basename = '_static/nova_forcedown'

master_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = ['_build']
pygments_style = 'sphinx'

html_theme = 'alabaster'
html_static_path = ['_static']
html_title = 'nova-forcedown'
html_theme_options = {
    'description': 'Mark failed compute hosts down at once; see hypervisor '
                   'status.',
}
