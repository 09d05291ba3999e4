"""The HTTP transport: the h11 protocol with read deadlines, the request guard, the listening
socket, the loopback server for tests, worker processes, and the JSON-RPC body parser."""
