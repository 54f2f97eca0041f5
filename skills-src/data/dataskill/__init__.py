"""The `data` skill's parts: reading tables as streams of rows (`source`,
`jsonarray`), what a cell's value means (`values`), filtering (`conditions`),
the three tools (`describe`, `query`, `aggregate`) and keeping answers small
(`output`)."""
