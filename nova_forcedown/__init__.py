"""nova-forcedown: mark failed compute hosts down at once.

Importing the package, before any submodule runs, turns eventlet's DNS
resolver off and silences the warnings eventlet's import brings, once.
oslo.versionedobjects imports oslo.messaging, which loads oslo.service's
eventlet back end; nothing in this project runs on eventlet. Its resolver
would import dnspython, about a tenth of a second of every command's start,
unless ``EVENTLET_NO_GREENDNS`` is set otherwise (then dnspython's DNSSEC
module touches the DSA keys cryptography 51 and later deprecate: four
lines each time). eventlet itself warns at import that it is deprecated
(and, when DeprecationWarnings are shown, at every fork). None of these
warnings is anything a user can act on. Every entry point imports this
package first: the console scripts, ``python -m nova_forcedown.cmd.*``, the
WSGI application and the benchmark (``python -m tools.benchmark``). Only
these three messages are filtered; other warnings, eventlet-related or
not, show as usual.
"""

import os
import warnings

os.environ.setdefault('EVENTLET_NO_GREENDNS', 'yes')

warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
warnings.filterwarnings('ignore', message=r'Using fork\(\) is a bad idea',
                        category=DeprecationWarning, module='eventlet')
warnings.filterwarnings('ignore', message='DSA is deprecated',
                        module=r'dns\.dnssecalgs')
