"""Where members' and servers' data lives: the repositories (`database`), the SQLite and
PostgreSQL stores (`stores`), the migrations runner (`migrations`), the copy to PostgreSQL
(`copy_to_postgres`) and the server settings' schema (`server_settings`). No discord."""
