import streamlit as st

st.title("Walkthrough")
st.write("Being built.")
