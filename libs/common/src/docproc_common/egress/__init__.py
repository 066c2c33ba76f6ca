"""Which hosts an address a tenant typed may make this deployment reach, and the connection
pinned to the address that was checked.

Tenants type addresses that docproc's own processes then connect to, from inside the
deployment's network: a sync source's ``site_url``, ``repo_url`` or ``endpoint_url``, and an
organization's registered embedding endpoint (which the embedder POSTs chunk text to, and
upload's search the query). Without a check, ``http://169.254.169.254/`` or a name on
``localhost`` would make docproc read, or write to, the operator's internal services, and the
differing failures would map their ports. Loopback, private, link-local, reserved and
multicast addresses are refused unless the deployment allows them
(``SYNC__ALLOW_PRIVATE_NETWORKS`` for sources, ``EMBEDDER__ALLOW_PRIVATE_ENDPOINTS`` for
organization endpoints: an on-premises store or model server, or tests). The app admin's
deployment-scope endpoints are the operator's own, and never checked.

One package for both, so the API's check and every connection judge an address alike:

* ``rules`` (``is_public``, ``literal_refusal``): what can be told without DNS, asked where
  an address is accepted (a source's configuration, an endpoint's registration);
* ``pinned`` (``check_url``, ``PinnedTransport``): the check of what a name resolves to, when the
  worker connects. The name is resolved once and the connection goes to an address that
  check accepted, never to a second DNS answer: a name that resolves to a public address for
  the check and to an internal one a moment later (DNS rebinding, a zero TTL) cannot reach
  the internal one.

A refusal is a ``NetworkRefusedError`` (a ``ConnectorError``: a sync run reports it as the
source's failure; the embedding client turns it into its own error), its message naming the
host, never the URL (a URL can carry userinfo or a token in its query string).
"""
