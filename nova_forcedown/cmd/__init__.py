"""Console scripts. Each turns configuration and database problems into a
one-line error and a non-zero exit, never a traceback."""

import warnings

# oslo.versionedobjects imports oslo.messaging and with it oslo.service's
# default eventlet backend, which warns on stderr that eventlet is
# deprecated. Nothing here runs on eventlet, so the warning is only noise.
warnings.filterwarnings('ignore', message='\nEventlet is deprecated',
                        module='oslo_service')
