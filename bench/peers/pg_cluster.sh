#!/bin/sh
# pg_cluster.sh — a throwaway PostgreSQL 15 cluster for the benchmark.
#
#   pg_cluster.sh start DATADIR PORT   initdb if needed, start; prints the conninfo
#   pg_cluster.sh stop  DATADIR        stop it (the data stays for a rerun)
#
# The cluster listens on a Unix socket only (no TCP), trusts local
# connections, and runs as the postgres user when we are root (PostgreSQL
# refuses to run as root). Settings are those of a bulk load on a scratch
# machine: no fsync, minimal WAL, more memory for the GIN build, and JIT
# off (its compile time would dominate millisecond queries).
set -eu

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
cmd=${1:?start|stop}
data=${2:?DATADIR}

as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $cmd in
start)
	port=${3:?PORT}
	sock=/tmp/fathom-bench-pg.$port
	mkdir -p "$data" "$sock"
	if [ "$(id -u)" = 0 ]; then chown postgres: "$data" "$sock"; fi
	if [ ! -f "$data/PG_VERSION" ]; then
		as_pg "$PGBIN/initdb" -D "$data" -A trust -U postgres -E UTF8 --locale=C.UTF-8 >/dev/null
	fi
	if ! as_pg "$PGBIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
		as_pg "$PGBIN/pg_ctl" -D "$data" -l "$data/server.log" -w -o \
			"-k $sock -p $port -c listen_addresses='' -c fsync=off -c synchronous_commit=off \
			 -c full_page_writes=off -c wal_level=minimal -c max_wal_senders=0 \
			 -c shared_buffers=2GB -c maintenance_work_mem=2GB -c work_mem=64MB \
			 -c max_wal_size=8GB -c checkpoint_timeout=30min -c jit=off" start >/dev/null
	fi
	echo "host=$sock port=$port dbname=postgres user=postgres"
	;;
stop)
	if [ -f "$data/postmaster.pid" ]; then
		as_pg "$PGBIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null
	fi
	;;
*)
	echo "usage: $0 start DATADIR PORT | stop DATADIR" >&2
	exit 2
	;;
esac
