"""Streamlit glue shared by the pages: widgets from the state table, common panels."""
