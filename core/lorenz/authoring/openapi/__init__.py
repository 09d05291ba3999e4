"""``lorenz new-pack --from-openapi``: a typed pack project generated from an OpenAPI 3.0/3.1 document.

``load`` reads, validates and inlines the document; ``operations`` lists and curates its operations;
``names`` and ``schema_to_attrs`` turn them into tool names and attrs fields; ``render`` writes the
generated module; ``project`` lays it into the project ``lorenz new-pack`` makes. Needs the
``openapi`` extra (``pip install 'lorenz-core[openapi]'``) for validation.
"""

from __future__ import annotations

from .load import OpenAPIError
from .operations import TooManyOperations
from .project import Selection, Update, new_openapi_pack, update_openapi_pack

__all__ = ["OpenAPIError", "Selection", "TooManyOperations", "Update", "new_openapi_pack", "update_openapi_pack"]
