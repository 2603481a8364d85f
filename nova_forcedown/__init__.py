"""nova-forcedown: mark failed compute hosts down at once.

Importing the package silences the warnings eventlet's import brings, once,
before any submodule runs. oslo.versionedobjects imports oslo.messaging,
which loads oslo.service's eventlet back end, and eventlet warns at import
that it is deprecated (and, when DeprecationWarnings are shown, at every
fork).
eventlet's resolver imports dnspython twice, whose DNSSEC module touches
the DSA keys cryptography 51 and later deprecate: four lines each time.
Nothing in this project runs on eventlet or DNSSEC, so none of these
warnings is anything a user can act on. Every entry point imports this
package first: the console scripts, ``python -m nova_forcedown.cmd.*``, the
WSGI application and the benchmark (``python -m tools.benchmark``). Only
these three messages are filtered; other warnings, eventlet-related or
not, show as usual.
"""

import warnings

warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
warnings.filterwarnings('ignore', message=r'Using fork\(\) is a bad idea',
                        category=DeprecationWarning, module='eventlet')
warnings.filterwarnings('ignore', message='DSA is deprecated',
                        module=r'dns\.dnssecalgs')
