/* SPDX-License-Identifier: MIT */
/* mksqlite.c - test helper: create the SQLite file argv[2] from the SQL script argv[1]. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 64;
	FILE *f = fopen(argv[1], "rb");
	if (!f)
		return 1;
	static char sql[1 << 20];
	size_t n = fread(sql, 1, sizeof(sql) - 1, f);
	fclose(f);
	sql[n] = 0;
	remove(argv[2]);
	sqlite3 *db;
	char *err = NULL;
	if (sqlite3_open(argv[2], &db) != SQLITE_OK ||
	    sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "mksqlite: %s\n", err ? err : sqlite3_errmsg(db));
		sqlite3_free(err);
		sqlite3_close(db);
		return 1;
	}
	return sqlite3_close(db) == SQLITE_OK ? 0 : 1;
}
