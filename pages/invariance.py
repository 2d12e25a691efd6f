import streamlit as st

st.title("invariance")
st.write("Being built.")
