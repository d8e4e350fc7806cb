"""Where members' and servers' data lives: the repositories (`database`), the SQLite and
PostgreSQL stores (`stores`), the migrations runner (`migrations`), the copy to PostgreSQL
(`copy_to_postgres`), the server settings' schema (`server_settings`), and the voices' records
(`voice_records`), files (`voice_files`) and deletion notices (`voice_deletions`). No discord."""
