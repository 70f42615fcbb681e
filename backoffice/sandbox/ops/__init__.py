"""Operations of the simulated platform; importing a module registers its routes.

Every module of this package is imported (the sandbox runs as its own deployment, without the domain
apps): a new domain's simulator is one new module here, and no shared file is edited to add it.
"""

import pkgutil
from importlib import import_module

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
    import_module(f"{__name__}.{_info.name}")
