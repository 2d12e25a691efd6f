import streamlit as st

st.title("family")
st.write("Being built.")
