package pgstore

// RawPageFunctionSQL creates RawPageFunction. Run it as a superuser in the
// store's database (after CREATE EXTENSION pageinspect), then
// GRANT EXECUTE ON FUNCTION lethe_raw_page(regclass, bigint) TO the store
// role. The function runs pageinspect's get_raw_page as its owner (in
// PostgreSQL 15 get_raw_page refuses every role but a superuser, whatever
// is granted) and reads a relation only when the role that logged in may
// SELECT from the table it belongs to (the table itself, its TOAST table,
// their indexes): a role gains no table it could not already read, though
// it reads dead tuples and free space no query shows.
const RawPageFunctionSQL = `CREATE OR REPLACE FUNCTION lethe_raw_page(rel regclass, blkno bigint) RETURNS bytea
LANGUAGE plpgsql STRICT SECURITY DEFINER SET search_path = pg_catalog, public AS $fn$
DECLARE
	tbl oid := rel;
BEGIN
	-- An index reads as its table; a TOAST table as the table it serves.
	SELECT coalesce((SELECT i.indrelid FROM pg_index i WHERE i.indexrelid = tbl), tbl) INTO tbl;
	-- (pg_class has no index on reltoastrelid: the TOAST table's internal
	-- dependency on its table, which pg_depend indexes, names the table.)
	IF (SELECT c.relkind FROM pg_class c WHERE c.oid = tbl) = 't' THEN
		SELECT coalesce((SELECT d.refobjid FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = tbl
			AND d.objsubid = 0 AND d.refclassid = 'pg_class'::regclass AND d.deptype = 'i'), tbl) INTO tbl;
	END IF;
	IF NOT has_table_privilege(session_user, tbl, 'SELECT') THEN
		RAISE EXCEPTION 'lethe_raw_page: role % may not SELECT from %', session_user, tbl::regclass
			USING ERRCODE = 'insufficient_privilege';
	END IF;
	RETURN get_raw_page(rel::text, 'main', blkno);
END
$fn$;
REVOKE ALL ON FUNCTION lethe_raw_page(regclass, bigint) FROM PUBLIC;`
