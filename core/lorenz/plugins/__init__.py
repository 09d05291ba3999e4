"""The plugin machinery: discovery, the checks a plugin passes, containment of plugin code, and the
registries discovery fills. Internal: pack authors import the public names from ``lorenz``."""
